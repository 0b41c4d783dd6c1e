-- list-users at 1 000 000 users (issue 14, docs/proposals/list-users-total.md, "Remembered term
-- totals"), PostgreSQL side. Hand-written (drizzle-kit generate --config drizzle.pg.config.ts
-- --custom): the exact total of a search term that no index counts cheaply is counted once and
-- then kept exact by triggers, in the same transaction as every write to "user", whoever makes it
-- (any instance, the CLI, SQL by hand).
--
-- Rows, all in one table:
-- - shard 0 of (field, pattern): a remembered term. `field` is 'email' or 'name', `pattern` the
--   lower()ed LIKE pattern of the query (escaped with '\'; list-users filters with
--   `lower(col) LIKE lower(pattern)`), `n` the count taken when it was added, `usedAt` (ms) for
--   forgetting the least recently used.
-- - shards 1-16: the changes since, each write adding to a random shard (as "userCount" does) so
--   that concurrent sign-ups of several instances do not all queue on one row. The total is the
--   sum of the shards.
-- - ('', '', 0): the epoch row. Adding a term locks "user" in SHARE mode (it waits for the writes
--   in flight, and new writes wait for it), bumps this row, counts and inserts the term. Every write
--   to "user" reads this row FOR SHARE before looking at the terms: a REPEATABLE READ or
--   SERIALIZABLE writer whose snapshot predates a term (so it cannot see the term, and the term's
--   count did not see its row) fails there with a serialization error and is retried, instead of
--   leaving the count one short. A READ COMMITTED writer sees the term in its next statement.
CREATE TABLE IF NOT EXISTS "userTermCount" (
  "field" text NOT NULL,
  "pattern" text NOT NULL,
  "shard" smallint NOT NULL,
  "n" bigint NOT NULL,
  "usedAt" bigint NOT NULL DEFAULT 0,
  PRIMARY KEY ("field", "pattern", "shard")
);
--> statement-breakpoint
INSERT INTO "userTermCount" ("field", "pattern", "shard", "n") VALUES ('', '', 0, 0) ON CONFLICT DO NOTHING;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gatehouse_user_term_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s smallint := 1 + floor(random() * 16);
  new_email text;
  new_name text;
  old_email text;
  old_name text;
BEGIN
  PERFORM 1 FROM "userTermCount" WHERE "field" = '' AND "pattern" = '' AND "shard" = 0 FOR SHARE;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    new_email := lower(NEW."email");
    new_name := lower(NEW."name");
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    old_email := lower(OLD."email");
    old_name := lower(OLD."name");
  END IF;
  INSERT INTO "userTermCount" ("field", "pattern", "shard", "n")
    SELECT d."field", d."pattern", s, d."delta" FROM (
      SELECT t."field", t."pattern",
        coalesce((CASE t."field" WHEN 'email' THEN new_email ELSE new_name END) LIKE t."pattern" ESCAPE '\', false)::int
        - coalesce((CASE t."field" WHEN 'email' THEN old_email ELSE old_name END) LIKE t."pattern" ESCAPE '\', false)::int AS "delta"
      FROM "userTermCount" t
      WHERE t."shard" = 0 AND t."field" <> ''
    ) d
    WHERE d."delta" <> 0
  ON CONFLICT ("field", "pattern", "shard") DO UPDATE SET "n" = "userTermCount"."n" + EXCLUDED."n";
  RETURN NULL;
END;
$$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS user_term_count_insert_delete ON "user";
--> statement-breakpoint
CREATE TRIGGER user_term_count_insert_delete AFTER INSERT OR DELETE ON "user"
  FOR EACH ROW EXECUTE FUNCTION gatehouse_user_term_count();
--> statement-breakpoint
DROP TRIGGER IF EXISTS user_term_count_update ON "user";
--> statement-breakpoint
CREATE TRIGGER user_term_count_update AFTER UPDATE OF "email", "name" ON "user"
  FOR EACH ROW WHEN (OLD."email" IS DISTINCT FROM NEW."email" OR OLD."name" IS DISTINCT FROM NEW."name")
  EXECUTE FUNCTION gatehouse_user_term_count();
