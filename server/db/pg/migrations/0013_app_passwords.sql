CREATE TABLE "appPassword" (
	"id" text PRIMARY KEY NOT NULL,
	"userId" text NOT NULL,
	"name" text NOT NULL,
	"hash" text NOT NULL,
	"hint" text NOT NULL,
	"createdAt" timestamp (3) with time zone NOT NULL,
	"expiresAt" timestamp (3) with time zone,
	"lastUsedAt" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "appPassword" ADD CONSTRAINT "appPassword_userId_user_id_fk" FOREIGN KEY ("userId") REFERENCES "public"."user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "appPassword_userId_idx" ON "appPassword" USING btree ("userId");--> statement-breakpoint
CREATE UNIQUE INDEX "appPassword_hash_unique" ON "appPassword" USING btree ("hash");