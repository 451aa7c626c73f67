-- AlterTable
ALTER TABLE "dialogs" ADD COLUMN     "name" TEXT;
