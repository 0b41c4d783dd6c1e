import { z } from 'zod'

/** One panel operation: its input and output schemas (shared with the renderer: zod only). */
export interface OpDef<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  summary: string
  /** Changes state: the renderer invalidates its cached queries after it succeeds. */
  mutates: boolean
  input: I
  output: O
  /**
   * The `admin.*` permission an admin signed in to the panel needs for it (its domain function
   * checks the same one): server/panel/permissions.ts refuses it without, and tells the renderer.
   */
  permission?: AdminPermission
}

/** One `admin.*` permission: resource and action (server/features/admin/statements.ts). */
export type AdminPermission = readonly ['user' | 'session', string]

/** The operation needs this `admin.*` permission (see OpDef.permission). */
export const requires = <I extends z.ZodType, O extends z.ZodType>(permission: AdminPermission, def: OpDef<I, O>): OpDef<I, O> => ({
  ...def,
  permission,
})

export const query = <I extends z.ZodType, O extends z.ZodType>(summary: string, input: I, output: O): OpDef<I, O> => ({
  summary,
  mutates: false,
  input,
  output,
})

export const mutation = <I extends z.ZodType, O extends z.ZodType>(summary: string, input: I, output: O): OpDef<I, O> => ({
  summary,
  mutates: true,
  input,
  output,
})

export const none = z.object({}).strict()
export const ok = z.object({ success: z.boolean() })

/** The request meta of a panel operation: the panel acts as the server itself, audit events name it instead of a user. */
export const PANEL_META = { ipAddress: null, userAgent: 'gatehouse-panel' }

/**
 * What a save of a managed object sends beside the fields it changes: each of them as the view read
 * it (field → value). A field another admin changed since is refused (409 CONFLICT, naming who and
 * when); absent, the fields are saved as before (scripts, the CLI).
 */
export const readBase = z.record(z.string(), z.unknown()).optional()
