-- list-users at 1 000 000 users (issue 14, docs/proposals/list-users-total.md), PostgreSQL side.
-- Hand-written (drizzle-kit generate --config drizzle.pg.config.ts --custom). The GIN trigram
-- indexes on lower(email) and lower(name) are in 0001_init.

-- starts_with: a btree on lower(col) with text_pattern_ops answers "lower(col) LIKE 'li%'" whatever
-- the collation; INCLUDE (col) lets PostgreSQL count from the index alone (an index-only scan on an
-- expression index needs the column itself in the index).
CREATE INDEX IF NOT EXISTS "user_email_lower_prefix_idx" ON "user" (lower("email") text_pattern_ops) INCLUDE ("email");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "user_name_lower_prefix_idx" ON "user" (lower("name") text_pattern_ops) INCLUDE ("name");
--> statement-breakpoint
-- Deep pages of everyone (ORDER BY col, "createdAt", id OFFSET n): the page's ids come from an
-- index-only scan of these, not from visiting every skipped row of the table.
CREATE INDEX IF NOT EXISTS "user_created_at_id_idx" ON "user" ("createdAt", "id");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "user_name_created_at_id_idx" ON "user" ("name", "createdAt", "id");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "user_email_created_at_id_idx" ON "user" ("email", "createdAt", "id");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "user_role_idx" ON "user" ("role", "createdAt");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "user_banned_idx" ON "user" ((coalesce("banned", false)), "createdAt");
--> statement-breakpoint
-- The maintained count, sharded: each write adds or subtracts one in a random one of 16 rows of its
-- (role, banned), so concurrent sign-ups on several instances do not all update one hot row (which
-- would queue them and, under SERIALIZABLE, make them retry). The count is the sum of the shards.
CREATE TABLE IF NOT EXISTS "userCount" (
  "role" text NOT NULL,
  "banned" boolean NOT NULL,
  "shard" smallint NOT NULL,
  "n" bigint NOT NULL,
  PRIMARY KEY ("role", "banned", "shard")
);
--> statement-breakpoint
DELETE FROM "userCount";
--> statement-breakpoint
INSERT INTO "userCount" ("role", "banned", "shard", "n")
  SELECT coalesce("role", ''), coalesce("banned", false), 0, count(*) FROM "user" GROUP BY 1, 2;
--> statement-breakpoint
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
--> statement-breakpoint
DROP TRIGGER IF EXISTS user_count_insert_delete ON "user";
--> statement-breakpoint
CREATE TRIGGER user_count_insert_delete AFTER INSERT OR DELETE ON "user"
  FOR EACH ROW EXECUTE FUNCTION gatehouse_user_count();
--> statement-breakpoint
DROP TRIGGER IF EXISTS user_count_update ON "user";
--> statement-breakpoint
CREATE TRIGGER user_count_update AFTER UPDATE OF "role", "banned" ON "user"
  FOR EACH ROW WHEN (coalesce(OLD."role", '') IS DISTINCT FROM coalesce(NEW."role", '')
                     OR coalesce(OLD."banned", false) IS DISTINCT FROM coalesce(NEW."banned", false))
  EXECUTE FUNCTION gatehouse_user_count();
