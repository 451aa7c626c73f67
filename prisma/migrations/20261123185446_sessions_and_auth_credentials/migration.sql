-- AlterTable
ALTER TABLE "applications" ADD COLUMN     "auth_key" TEXT,
ADD COLUMN     "auth_secret_sealed" TEXT;

-- AlterTable
ALTER TABLE "sessions" ADD COLUMN     "nonce" TEXT,
ADD COLUMN     "signed_at" TIMESTAMPTZ(0),
ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- CreateTable
CREATE TABLE "session_nonces" (
    "application_id" INTEGER NOT NULL,
    "signed_at" TIMESTAMPTZ(0) NOT NULL,
    "nonce" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "session_nonces_pkey" PRIMARY KEY ("application_id","signed_at","nonce")
);

-- CreateIndex
CREATE UNIQUE INDEX "applications_auth_key_key" ON "applications"("auth_key");

-- CreateIndex
CREATE UNIQUE INDEX "users_application_id_email_key" ON "users"("application_id", "email");

-- AddForeignKey
ALTER TABLE "session_nonces" ADD CONSTRAINT "session_nonces_application_id_fkey" FOREIGN KEY ("application_id") REFERENCES "applications"("id") ON DELETE CASCADE ON UPDATE CASCADE;
