-- Hand-written (drizzle-kit generate --custom): the configuration shared by every instance on this
-- database (server/config/shared.ts). One row: the stored layer the control panel edits, which on
-- SQLite is the data directory's config.json. PostgreSQL only: a SQLite install keeps config.json.
-- Each write notifies the instances (gatehouse_change, with the table's name), which reload it.
CREATE TABLE IF NOT EXISTS "gatehouseConfig" (
  "id" integer PRIMARY KEY CHECK ("id" = 1),
  "config" jsonb NOT NULL,
  "updatedAt" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TRIGGER gatehouse_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "gatehouseConfig" FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_change();
