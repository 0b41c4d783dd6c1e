ALTER TABLE "samlKey" ADD COLUMN "activatesAt" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "samlRequest" ADD COLUMN "source" text;--> statement-breakpoint
CREATE INDEX "samlRequest_source_idx" ON "samlRequest" USING btree ("source","expiresAt");