import { z } from 'zod'

const seconds = z.number().int().min(0)

/** `user.changeEmail.*`: better-auth's option names. */
export const changeEmailConfig = z
  .object({
    enabled: z.boolean().default(false),
    /** better-auth's `sendChangeEmailVerification` hook, as a switch (confirmation mail to the current address). */
    sendChangeEmailVerification: z.boolean().default(true),
    /**
     * An unverified address is replaced at once, with the session alone (better-auth's option; off by
     * default as in 1.7: the change then waits for the link mailed to the new address).
     */
    updateEmailWithoutVerification: z.boolean().default(false),
    /** Changing the address needs a session younger than session.freshAge (Gatehouse default; better-auth has no such check). */
    requireFreshSession: z.boolean().default(true),
  })
  .prefault({})

/** `user.deleteUser.*`: better-auth's option names. */
export const deleteUserConfig = z
  .object({
    enabled: z.boolean().default(false),
    deleteTokenExpiresIn: seconds.default(86400),
    /** better-auth's `sendDeleteAccountVerification` hook, as a switch: deletion then always goes through a mailed link. */
    sendDeleteAccountVerification: z.boolean().default(false),
  })
  .prefault({})

/** `account.*`: better-auth's option names (linking is used by social sign-in too). */
export const accountConfig = z
  .object({
    accountLinking: z
      .object({
        enabled: z.boolean().default(true),
        trustedProviders: z.array(z.string()).default([]),
        allowDifferentEmails: z.boolean().default(false),
        allowUnlinkingAll: z.boolean().default(false),
      })
      .prefault({}),
  })
  .prefault({})

/**
 * `accountNotices.*` (Gatehouse's own; better-auth leaves such mail to each app): the security
 * notices mailed to a person through the outbox, each switched off by its key.
 */
export const accountNoticesConfig = z
  .object({
    /** Their password was changed by them, reset (link or code), or set by an administrator. */
    passwordChanged: z.boolean().default(true),
    /** Their email address was changed: told to the previous address. */
    emailChanged: z.boolean().default(true),
    /** They turned their second factor (TOTP / email codes) off. */
    twoFactorDisabled: z.boolean().default(true),
    /** A passkey was registered on their account. */
    passkeyAdded: z.boolean().default(true),
    /** An app password was created on their account. */
    appPasswordCreated: z.boolean().default(true),
    /**
     * A sign-in from a device (browser and system) and network (IPv4 /24, IPv6 /64) not seen in
     * their sign-ins and sessions of the last 90 days; never for their first sign-in.
     */
    newDeviceSignIn: z.boolean().default(true),
  })
  .prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = {
  'user.changeEmail': changeEmailConfig,
  'user.deleteUser': deleteUserConfig,
  account: accountConfig,
  accountNotices: accountNoticesConfig,
}
