ALTER TABLE "oidcRegistrationToken" ADD COLUMN "label" text;--> statement-breakpoint
ALTER TABLE "oidcRegistrationToken" ADD COLUMN "createdBy" text;