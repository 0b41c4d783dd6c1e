import { Alert, Tooltip } from '@mantine/core'
import { IconEye } from '@tabler/icons-react'
import { cloneElement, type ReactElement, type ReactNode } from 'react'
import type { OpName } from '../../server/panel/contract'
import { useOp } from './api'

/**
 * What the signed-in admin may change (issue 31): the server tells it in `server.info`'s caller
 * (`changes`: the mutating operations its dispatcher would run for them; `permissions`: their
 * `admin.*` permissions), computed by the rule it refuses by (server/panel/permissions.ts). Every
 * control that changes something asks here and is disabled, with a tooltip saying why, or hidden
 * when the server would refuse it; the server keeps refusing anyway.
 */
export interface Access {
  /** A role with only some `admin.*` permissions. */
  viewOnly: boolean
  /** Whether the operation (a change) would be run for the caller. */
  may(op: OpName): boolean
  /** Whether the caller holds an `admin.*` permission (`user:ban`, `session:revoke`). */
  can(permission: string): boolean
}

export const NOT_ALLOWED = 'Your role may view this, but not change it. Ask an administrator.'

export function useAccess(): Access {
  const caller = useOp('server.info', {}).data?.caller
  // No caller known (the desktop's operator, or not loaded yet): nothing is hidden; the server decides.
  if (!caller) return { viewOnly: false, may: () => true, can: () => true }
  const changes = new Set(caller.changes)
  const permissions = new Set(caller.permissions)
  return {
    viewOnly: caller.access === 'limited',
    may: (op) => changes.has(op),
    can: (permission) => permissions.has(permission),
  }
}

/**
 * A control that runs `op` (and, with `permission`, needs that `admin.*` permission too): shown as
 * it is when allowed; otherwise disabled with a tooltip saying why, or left out with `hide` (menu
 * entries, whole forms).
 */
export function Allowed({
  op,
  permission,
  hide,
  children,
}: {
  op: OpName | OpName[]
  permission?: string
  hide?: boolean
  children: ReactElement<{ disabled?: boolean }>
}) {
  const access = useAccess()
  const ops = Array.isArray(op) ? op : [op]
  const allowed = ops.every((o) => access.may(o)) && (!permission || access.can(permission))
  if (allowed) return children
  if (hide) return null
  return (
    <Tooltip label={NOT_ALLOWED} withArrow multiline maw={260}>
      <span style={{ display: 'inline-block' }} data-testid="not-allowed">
        {cloneElement(children, { disabled: true })}
      </span>
    </Tooltip>
  )
}

/** Whether every one of the operations would be run for the caller (a hook: for conditions in JSX). */
export function useMay(...ops: OpName[]): boolean {
  const access = useAccess()
  return ops.every((op) => access.may(op))
}

/** The note a read-only form (Settings, a configuration view) shows a view-only admin. */
export function ReadOnlyNote({ children }: { children?: ReactNode }) {
  return (
    <Alert color="gray" variant="light" icon={<IconEye />} title="View only" mb="md" data-testid="read-only-note">
      {children ?? 'Your role may view these settings, but changing them needs an administrator.'}
    </Alert>
  )
}

/**
 * A form whose every control changes something through `op`: for a caller who may not, every
 * input and button inside is disabled at once (a native disabled fieldset), and the `note` says why.
 */
export function Editable({ op, note, children }: { op: OpName | OpName[]; note?: boolean; children: ReactNode }) {
  const access = useAccess()
  const allowed = (Array.isArray(op) ? op : [op]).every((o) => access.may(o))
  return (
    <>
      {!allowed && note && <ReadOnlyNote />}
      <fieldset disabled={!allowed} data-read-only={!allowed || undefined} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
        {children}
      </fieldset>
    </>
  )
}
