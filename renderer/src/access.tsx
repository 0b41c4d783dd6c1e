import { Alert, Tooltip, VisuallyHidden } from '@mantine/core'
import { IconEye } from '@tabler/icons-react'
import { cloneElement, type KeyboardEvent, type ReactElement, type ReactNode, type SyntheticEvent, useId } from 'react'
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
 * The props `Allowed` gives a refused control (a Mantine Button, or a component passing them to
 * one, like ConfirmButton): disabled to the eye and to assistive technology, yet focusable, so a
 * keyboard user reaches it and hears why (`aria-describedby`: the reason).
 */
export interface RefusedProps {
  disabled?: boolean
  'aria-disabled'?: boolean
  'aria-describedby'?: string
  'data-disabled'?: boolean
}

/** Swallows an activation of a refused control before the control's own handler sees it. */
function refuse(event: SyntheticEvent): void {
  event.preventDefault()
  event.stopPropagation()
}

/** Enter and Space activate a button (Space on key up): neither may reach a refused one. */
function refuseKey(event: KeyboardEvent): void {
  if (event.key === 'Enter' || event.key === ' ' || event.key === 'Spacebar') refuse(event)
}

/**
 * A control that runs `op` (and, with `permission`, needs that `admin.*` permission too): shown as
 * it is when allowed; otherwise left out with `hide` (menu entries, whole forms), or shown refused:
 * `aria-disabled` rather than `disabled` (a disabled button takes no focus, so its reason would be
 * out of a keyboard user's reach), the reason tied to it by `aria-describedby` and shown in a
 * tooltip on hover and on keyboard focus, and every activation (click, Enter, Space, and so a
 * form's submit) stopped here, in the capture phase, before the control's own handler runs.
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
  children: ReactElement<RefusedProps>
}) {
  const access = useAccess()
  const reasonId = useId()
  const ops = Array.isArray(op) ? op : [op]
  const allowed = ops.every((o) => access.may(o)) && (!permission || access.can(permission))
  if (allowed) return children
  if (hide) return null
  return (
    <Tooltip label={NOT_ALLOWED} withArrow multiline maw={260} events={{ hover: true, focus: true, touch: true }}>
      <span
        style={{ display: 'inline-block' }}
        data-testid="not-allowed"
        onClickCapture={refuse}
        onDoubleClickCapture={refuse}
        onKeyDownCapture={refuseKey}
        onKeyUpCapture={refuseKey}
        onSubmitCapture={refuse}
      >
        {cloneElement(children, {
          disabled: false,
          'aria-disabled': true,
          'aria-describedby': reasonId,
          'data-disabled': true,
        })}
        <VisuallyHidden id={reasonId}>{NOT_ALLOWED}</VisuallyHidden>
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
 * input and button inside is disabled at once (a native disabled fieldset: nothing in it can be
 * changed, by mouse or keyboard), the `note` says why, and the fieldset is described by the reason
 * for a screen reader entering it.
 */
export function Editable({ op, note, children }: { op: OpName | OpName[]; note?: boolean; children: ReactNode }) {
  const access = useAccess()
  const reasonId = useId()
  const allowed = (Array.isArray(op) ? op : [op]).every((o) => access.may(o))
  return (
    <>
      {!allowed && note && <ReadOnlyNote />}
      <fieldset
        disabled={!allowed}
        data-read-only={!allowed || undefined}
        aria-describedby={allowed ? undefined : reasonId}
        style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}
      >
        {!allowed && <VisuallyHidden id={reasonId}>{NOT_ALLOWED}</VisuallyHidden>}
        {children}
      </fieldset>
    </>
  )
}
