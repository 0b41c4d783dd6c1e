-- Proposal (docs/proposals/list-users-total.md), PostgreSQL side: at merge a drizzle-kit --custom
-- migration of the pg folder (drizzle.pg.config.ts). The GIN trigram indexes on lower(email) and
-- lower(name) are already in 0001_init.

-- starts_with: a btree range on lower(email) (text_pattern_ops: LIKE 'li%' whatever the collation);
-- INCLUDE (email) lets PostgreSQL count from the index alone (index-only scan on an expression index).
CREATE INDEX IF NOT EXISTS "user_email_lower_prefix_idx" ON "user" (lower("email") text_pattern_ops) INCLUDE ("email");
CREATE INDEX IF NOT EXISTS "user_name_lower_prefix_idx" ON "user" (lower("name") text_pattern_ops) INCLUDE ("name");
CREATE INDEX IF NOT EXISTS "user_role_idx" ON "user" ("role", "createdAt");
CREATE INDEX IF NOT EXISTS "user_banned_idx" ON "user" ((coalesce("banned", false)), "createdAt");

-- The maintained count, sharded: each write adds or subtracts one in a random one of 16 rows of its
-- (role, banned), so concurrent sign-ups on several instances do not all update one hot row (which
-- would serialise them and, under SERIALIZABLE, make them retry). The total is the sum of the shards.
CREATE TABLE IF NOT EXISTS "userCount" (
  "role" text NOT NULL,
  "banned" boolean NOT NULL,
  "shard" smallint NOT NULL,
  "n" bigint NOT NULL,
  PRIMARY KEY ("role", "banned", "shard")
);
DELETE FROM "userCount";
INSERT INTO "userCount" ("role", "banned", "shard", "n")
  SELECT coalesce("role", ''), coalesce("banned", false), 0, count(*) FROM "user" GROUP BY 1, 2;

CREATE OR REPLACE FUNCTION gatehouse_user_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s smallint := floor(random() * 16);
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO "userCount" VALUES (coalesce(OLD."role", ''), coalesce(OLD."banned", false), s, -1)
      ON CONFLICT ("role", "banned", "shard") DO UPDATE SET "n" = "userCount"."n" - 1;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO "userCount" VALUES (coalesce(NEW."role", ''), coalesce(NEW."banned", false), s, 1)
      ON CONFLICT ("role", "banned", "shard") DO UPDATE SET "n" = "userCount"."n" + 1;
  END IF;
  RETURN NULL;
END;
$$;
DROP TRIGGER IF EXISTS user_count_insert_delete ON "user";
CREATE TRIGGER user_count_insert_delete AFTER INSERT OR DELETE ON "user"
  FOR EACH ROW EXECUTE FUNCTION gatehouse_user_count();
DROP TRIGGER IF EXISTS user_count_update ON "user";
CREATE TRIGGER user_count_update AFTER UPDATE OF "role", "banned" ON "user"
  FOR EACH ROW WHEN (coalesce(OLD."role", '') IS DISTINCT FROM coalesce(NEW."role", '')
                     OR coalesce(OLD."banned", false) IS DISTINCT FROM coalesce(NEW."banned", false))
  EXECUTE FUNCTION gatehouse_user_count();
