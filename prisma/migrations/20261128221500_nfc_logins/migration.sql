-- Logins in Unicode NFC (issue 31): the service stores new logins, and looks
-- logins up, in NFC, so that `josé` typed on a keyboard that composes é and
-- on one that decomposes it (NFD: macOS, iOS) names one user. Existing
-- logins are rewritten to NFC here, except one whose NFC spelling another
-- user of its application has, or would have: it keeps its spelling
-- (reachable by its email, or renamed by an operator), as the unique key
-- wants. Only logins not in NFC are looked at (none, on most databases).
UPDATE "users" u
   SET "login" = normalize(u."login", NFC)
 WHERE u."login" IS NOT NFC NORMALIZED
   AND NOT EXISTS (SELECT 1 FROM "users" o
                    WHERE o."application_id" = u."application_id" AND o."id" <> u."id"
                      AND normalize(o."login", NFC) = normalize(u."login", NFC));
