-- AlterTable
ALTER TABLE "messages" ALTER COLUMN "body" DROP NOT NULL;

-- CreateTable
CREATE TABLE "retained_message_contents" (
    "message_id" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "deleted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "retained_message_contents_pkey" PRIMARY KEY ("message_id")
);

-- CreateIndex
CREATE INDEX "retained_message_contents_expires_at_idx" ON "retained_message_contents"("expires_at");

-- CreateIndex
CREATE INDEX "sessions_expires_at_idx" ON "sessions"("expires_at");

-- AddForeignKey
ALTER TABLE "retained_message_contents" ADD CONSTRAINT "retained_message_contents_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Deleted content is deleted (README: Decisions, "Deleted messages"): the
-- content of messages already deleted for everyone, or hidden by every
-- occupant, goes now. The service cannot know at this point whether an
-- operator wants it retained (DELETED_CONTENT_RETENTION_S): whoever needs it
-- for audit copies it before upgrading.
UPDATE "messages" m SET "body" = NULL
 WHERE m."body" IS NOT NULL
   AND (m."deleted_at" IS NOT NULL
        OR NOT EXISTS (SELECT 1 FROM "dialog_occupants" o
                        WHERE o."dialog_id" = m."dialog_id"
                          AND NOT EXISTS (SELECT 1 FROM "message_hides" h WHERE h."message_id" = m."id" AND h."user_id" = o."user_id")));
