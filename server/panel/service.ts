import type { z } from 'zod'
import { APIError } from '../core/errors.js'
import { recordAudit } from '../core/audit.js'
import { configAuditSettled } from '../core/config-audit.js'
import { StaleSave } from '../core/object-revisions.js'
import { type PanelCaller, runAsPanelCaller } from '../core/panel-caller.js'
import { ConfigError } from '../config/store.js'
import type { PanelDownload } from '../feature.js'
import { features } from '../features/index.js'
import type { featureContracts } from '../features/panel-contracts.js'
import type { Logger } from '../log.js'
import type { HandlersOf, PanelEnv } from '../panel-frame/env.js'
import { type Contract, contract, isOpName, type PanelFailure, type PanelResult } from './contract.js'
import { configConflictError, PanelError } from '../panel-frame/errors.js'
import { panelRefusal } from './permissions.js'
import { systemHandlers } from './ops/system.js'

type Handlers = HandlersOf<Contract>

export interface PanelService {
  env: PanelEnv
  /**
   * Validates the input against the contract, runs the operation as `caller` (default: the env's
   * operator), validates its output. Never throws.
   */
  dispatch(op: string, input: unknown, caller?: PanelCaller): Promise<PanelResult>
  /** A file a feature offers for download (GET /panel/download/<kind>/<name>), or null. */
  download(kind: string, name: string): PanelDownload | null
}

const issuesOf = (error: z.ZodError): Array<{ path: string; message: string }> =>
  error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }))

function toFailure(error: unknown, logger: Logger, op: string): PanelFailure {
  // A managed object saved over another admin's change: the same 409 CONFLICT as a configuration save.
  if (error instanceof StaleSave) error = configConflictError(error.conflicts)
  if (error instanceof PanelError) {
    return { code: error.code, message: error.message, status: error.status, ...(error.issues ? { issues: error.issues } : {}) }
  }
  if (error instanceof APIError) {
    return { code: error.code, message: error.message, status: error.status, ...(error.field ? { field: error.field } : {}) }
  }
  if (error instanceof ConfigError) return { code: 'INVALID_CONFIG', message: error.message, status: 400 }
  logger.error(`panel operation ${op} failed:`, error)
  return { code: 'INTERNAL_SERVER_ERROR', message: 'Internal server error', status: 500 }
}

export function createPanelService(env: PanelEnv): PanelService {
  const handlers: Handlers = {
    ...systemHandlers(env),
    // Feature folders declare their operations in their panel contract and handle them here.
    // (Their input and output are checked against the contract at dispatch, like every operation.)
    ...(Object.assign({}, ...features.map((feature) => feature.panel?.(env) ?? {})) as Pick<Handlers, keyof typeof featureContracts>),
  }
  const downloads = Object.assign({}, ...features.map((feature) => feature.panelDownloads?.(env) ?? {})) as Record<
    string,
    (name: string) => PanelDownload | null
  >
  return {
    env,
    download: (kind, name) => (Object.hasOwn(downloads, kind) ? (downloads[kind]?.(name) ?? null) : null),
    dispatch(op, input, caller = env.operator) {
      return caller ? runAsPanelCaller(caller, () => run(op, input, caller)) : run(op, input, null)
    },
  }

  async function run(op: string, input: unknown, caller: PanelCaller | null): Promise<PanelResult> {
    if (!isOpName(op)) return { ok: false, error: { code: 'UNKNOWN_OPERATION', message: `Unknown operation ${op}`, status: 404 } }
    const def = contract[op]
    // The rule the renderer is told too (server.info's caller.changes): what it hides is what is refused here.
    const refusal = panelRefusal(env.gatehouse.ctx.config(), caller, op)
    if (refusal) {
      // Audited as the admin who tried (recordAudit names the panel's caller).
      await recordAudit(env.gatehouse.ctx, {
        type: 'panel.forbidden',
        outcome: 'failure',
        target: op,
        detail: { op, reason: refusal },
      }).catch((error: unknown) => env.logger.error('panel: the refusal could not be audited:', error))
      return { ok: false, error: { code: 'PANEL_FORBIDDEN', message: refusal, status: 403 } }
    }
    const parsed = def.input.safeParse(input ?? {})
    if (!parsed.success) {
      const issues = issuesOf(parsed.error)
      const first = issues[0]
      return {
        ok: false,
        error: {
          code: 'VALIDATION_ERROR',
          message: first ? `${first.path ? `${first.path}: ` : ''}${first.message}` : 'Invalid input',
          status: 400,
          issues,
        },
      }
    }
    try {
      const handler = handlers[op] as (value: unknown) => unknown
      const result = await handler(parsed.data)
      // The audit events of the config changes it made are written before it answers.
      await configAuditSettled(env.gatehouse.ctx)
      // The output schema is also a filter: fields it does not name (hashes, tokens) never leave.
      const out = def.output.safeParse(result)
      if (!out.success) {
        env.logger.error(`panel operation ${op} returned a value outside its contract:`, out.error)
        return { ok: false, error: { code: 'INTERNAL_SERVER_ERROR', message: 'Internal server error', status: 500 } }
      }
      return { ok: true, data: out.data }
    } catch (error) {
      return { ok: false, error: toFailure(error, env.logger, op) }
    }
  }
}
