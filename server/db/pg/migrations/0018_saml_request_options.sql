ALTER TABLE "samlRequest" ADD COLUMN "forceAuthn" boolean;--> statement-breakpoint
ALTER TABLE "samlRequest" ADD COLUMN "isPassive" boolean;