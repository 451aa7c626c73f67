-- AlterTable
ALTER TABLE "applications" ADD COLUMN     "disabled_at" TIMESTAMPTZ(3);
