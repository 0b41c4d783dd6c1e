import { type UseQueryOptions, useIsFetching, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import {
  contract,
  type GatehouseBridge,
  type OpInput,
  type OpName,
  type OpOutput,
  type PanelFailure,
  type PanelResult,
} from '../../server/panel/contract'

declare global {
  interface Window {
    /** Present in the desktop app (preload); absent in the browser panel. */
    gatehouse?: GatehouseBridge
  }
}

/** A failed operation: the server's code and message, and field issues for forms. */
export class PanelCallError extends Error {
  readonly code: string
  readonly status: number
  readonly issues: Array<{ path: string; message: string }>
  /** The input field the server named for this error, if any. */
  readonly field: string | undefined
  constructor(failure: PanelFailure) {
    super(failure.message)
    this.name = 'PanelCallError'
    this.code = failure.code
    this.status = failure.status
    this.issues = failure.issues ?? []
    this.field = failure.field
  }

  /** The message to show beside `field`: the server's domain error for it, or a validation issue on it. */
  messageFor(field: string): string | undefined {
    if (this.field === field) return this.message
    return this.issues.find((issue) => issue.path === field)?.message
  }
}

async function overHttp(op: OpName, input: unknown): Promise<PanelResult> {
  const response = await fetch(`./panel/api/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(input ?? {}),
    credentials: 'same-origin',
  })
  const body = (await response.json().catch(() => null)) as unknown
  if (response.ok) return { ok: true, data: body }
  const failure = (body ?? {}) as Partial<PanelFailure>
  return {
    ok: false,
    error: {
      code: failure.code ?? 'HTTP_ERROR',
      message: failure.message ?? `Request failed (${response.status})`,
      status: response.status,
      ...(failure.field ? { field: failure.field } : {}),
      issues: failure.issues,
    },
  }
}

export const transport = (): 'ipc' | 'http' => (window.gatehouse ? 'ipc' : 'http')

/** Fired on window when the browser panel's session ended (expired, revoked, server restarted without it). */
export const SIGNED_OUT_EVENT = 'gatehouse:panel-signed-out'

/** Calls one panel operation over IPC (desktop) or loopback HTTP (browser). */
export async function call<K extends OpName>(op: K, input: OpInput<K>): Promise<OpOutput<K>> {
  const result = window.gatehouse ? await window.gatehouse.call(op, input) : await overHttp(op, input)
  if (!result.ok) {
    // The panel's sign-in page takes over (renderer/src/PanelSignIn.tsx), whatever view asked.
    if (
      result.error.code === 'PANEL_SIGN_IN_REQUIRED' ||
      result.error.code === 'PANEL_NOT_ADMIN' ||
      result.error.code === 'TWO_FACTOR_ENROLLMENT_REQUIRED'
    ) {
      window.dispatchEvent(new CustomEvent(SIGNED_OUT_EVENT, { detail: result.error }))
    }
    throw new PanelCallError(result.error)
  }
  return result.data as OpOutput<K>
}

/** One call of the panel's sign-in relay (/panel/auth/…: the API's own sign-in endpoints). */
export async function panelAuth(path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const response = await fetch(`./panel/auth/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    credentials: 'same-origin',
  })
  return { status: response.status, body: (await response.json().catch(() => null)) as Record<string, unknown> | null }
}

export function useOp<K extends OpName>(
  op: K,
  input: OpInput<K>,
  options: Omit<UseQueryOptions<OpOutput<K>, PanelCallError>, 'queryKey' | 'queryFn'> = {},
) {
  return useQuery<OpOutput<K>, PanelCallError>({
    queryKey: [op, input],
    queryFn: () => call(op, input),
    ...options,
  })
}

/** A mutation; on success every cached query is refreshed (the server is the source of truth). */
export function useOpMutation<K extends OpName>(op: K) {
  const client = useQueryClient()
  return useMutation<OpOutput<K>, PanelCallError, OpInput<K>>({
    mutationFn: (input) => call(op, input),
    onSuccess: () => {
      if (contract[op].mutates) void client.invalidateQueries()
    },
  })
}

/**
 * Whether the view's copy of `op` is being read again (after a save, or on focus). A control that
 * saves at once sends the value it shows as the save's `base`, so it is disabled while its own
 * save is pending and until the value is read again: a second click in between would act on the
 * value from before the first, and the server would refuse it as another admin's change.
 */
export function useRereading(op: OpName): boolean {
  return useIsFetching({ queryKey: [op] }) > 0
}

export function openExternal(url: string): void {
  if (window.gatehouse) void window.gatehouse.openExternal(url)
  else window.open(url, '_blank', 'noopener,noreferrer')
}

/** Saves text as a file (audit export) in both transports. */
export function download(filename: string, mime: string, content: string): void {
  const url = URL.createObjectURL(new Blob([content], { type: mime }))
  const a = document.createElement('a')
  a.href = url
  a.download = filename
  document.body.appendChild(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}
