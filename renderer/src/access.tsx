import { Alert, Text, Tooltip, VisuallyHidden } from '@mantine/core'
import { IconEye } from '@tabler/icons-react'
import { cloneElement, type KeyboardEvent, type ReactElement, type ReactNode, type SyntheticEvent, useEffect, useId, useRef } from 'react'
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
export function ReadOnlyNote({ id, children }: { id?: string; children?: ReactNode }) {
  return (
    <Alert color="gray" variant="light" icon={<IconEye />} title="View only" mb="md" data-testid="read-only-note">
      <span id={id}>{children ?? 'Your role may view these settings, but changing them needs an administrator.'}</span>
    </Alert>
  )
}

/** The controls a read-only form locks; a hidden input carries no value a person edits. */
const CONTROLS = 'input:not([type="hidden"]), textarea, select, button, [role="switch"], [role="checkbox"], [role="combobox"]'
/** Roles (and native kinds) ARIA lets say `aria-readonly` (a radio or a button may not). */
const SAYS_READONLY = new Set([
  'text',
  'search',
  'email',
  'url',
  'tel',
  'number',
  'password',
  'checkbox',
  'textarea',
  'select',
  'switch',
  'combobox',
])
/** Keys that move in a read-only field without changing it (and copy, select all). */
const MOVING_KEYS = new Set(['Tab', 'Escape', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'Shift', 'Control', 'Alt', 'Meta'])

function kindOf(el: HTMLElement): string {
  const role = el.getAttribute('role')
  if (role) return role
  if (el instanceof HTMLInputElement) return el.type || 'text'
  return el.tagName.toLowerCase()
}

/** Marks one control read-only (a field) or refused (a button), described by the reason; `undo` takes the marks off. */
function lockControl(el: HTMLElement, reasonId: string, undo = false): void {
  const described = (el.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id && id !== reasonId)
  if (undo) {
    if (!el.hasAttribute('data-locked')) return
    el.removeAttribute('data-locked')
    if (el.getAttribute('data-locked-readonly') !== null) {
      el.removeAttribute('data-locked-readonly')
      ;(el as HTMLInputElement).readOnly = false
    }
    el.removeAttribute(el instanceof HTMLButtonElement ? 'aria-disabled' : 'aria-readonly')
    if (described.length) el.setAttribute('aria-describedby', described.join(' '))
    else el.removeAttribute('aria-describedby')
    return
  }
  // Idempotent (only what is missing is set): React may rewrite an attribute after the first pass.
  if (!el.hasAttribute('data-locked')) el.setAttribute('data-locked', '')
  if ((el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) && !el.readOnly) {
    el.readOnly = true
    el.setAttribute('data-locked-readonly', '')
  }
  if (el instanceof HTMLButtonElement) {
    if (el.getAttribute('aria-disabled') !== 'true') el.setAttribute('aria-disabled', 'true')
  } else if (SAYS_READONLY.has(kindOf(el)) && el.getAttribute('aria-readonly') !== 'true') el.setAttribute('aria-readonly', 'true')
  const current = el.getAttribute('aria-describedby') ?? ''
  if (!current.split(' ').includes(reasonId)) el.setAttribute('aria-describedby', [...described, reasonId].join(' '))
}

/** Whether an event on `target` would change something in a read-only form. */
function changes(target: EventTarget | null, key?: string): boolean {
  if (!(target instanceof HTMLElement)) return false
  const control = target.closest<HTMLElement>(CONTROLS)
  if (!control) return false
  const kind = kindOf(control)
  const toggles =
    control instanceof HTMLButtonElement ||
    ['checkbox', 'radio', 'switch', 'combobox'].includes(kind) ||
    control.hasAttribute('aria-haspopup')
  if (key === undefined) return toggles
  if (MOVING_KEYS.has(key)) return false
  // Lines of a long text are read with the arrows.
  if (control instanceof HTMLTextAreaElement && (key === 'ArrowUp' || key === 'ArrowDown' || key === 'PageUp' || key === 'PageDown'))
    return false
  return true
}

/**
 * A form whose every control changes something through `op`: for a caller who may not, the form
 * stays readable and focusable (a disabled fieldset would take every field out of the keyboard's
 * reach and out of the accessibility tree's "focusable" set), but nothing in it changes: each field
 * is `readOnly` and `aria-readonly`, each button `aria-disabled`, every one described by the reason,
 * which is shown (`note`: the view's read-only note; otherwise a line above the form); and every
 * changing event (typing, pasting, a click on a switch, a button or a select, Enter and Space) is
 * stopped here, in the capture phase, before a control's own handler runs. The server refuses
 * anyway.
 */
export function Editable({ op, note, children }: { op: OpName | OpName[]; note?: boolean; children: ReactNode }) {
  const access = useAccess()
  const reasonId = useId()
  const root = useRef<HTMLFieldSetElement>(null)
  const allowed = (Array.isArray(op) ? op : [op]).every((o) => access.may(o))
  useEffect(() => {
    const fieldset = root.current
    if (allowed || !fieldset) return
    const mark = () => {
      for (const el of fieldset.querySelectorAll<HTMLElement>(CONTROLS)) lockControl(el, reasonId)
    }
    mark()
    // Controls drawn later (a tab opened, a row added) are locked as they appear.
    const observer = new MutationObserver(mark)
    observer.observe(fieldset, { childList: true, subtree: true, attributes: true, attributeFilter: ['aria-describedby', 'readonly'] })
    return () => {
      observer.disconnect()
      for (const el of fieldset.querySelectorAll<HTMLElement>('[data-locked]')) lockControl(el, reasonId, true)
    }
  }, [allowed, reasonId])
  const stop = (event: SyntheticEvent) => {
    if (!allowed) refuse(event)
  }
  const stopIf = (test: (event: SyntheticEvent) => boolean) => (event: SyntheticEvent) => {
    if (!allowed && test(event)) refuse(event)
  }
  return (
    <fieldset
      ref={root}
      data-read-only={!allowed || undefined}
      aria-describedby={allowed ? undefined : reasonId}
      style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}
      onClickCapture={stopIf((e) => changes(e.target))}
      onKeyDownCapture={stopIf((e) => changes(e.target, (e as KeyboardEvent).key))}
      onKeyUpCapture={stopIf((e) => (e as KeyboardEvent).key === ' ' && changes(e.target))}
      onBeforeInputCapture={stop}
      onChangeCapture={stop}
      onPasteCapture={stop}
      onCutCapture={stop}
      onDropCapture={stop}
      onSubmitCapture={stop}
    >
      {!allowed &&
        (note ? (
          <ReadOnlyNote id={reasonId}>{NOT_ALLOWED}</ReadOnlyNote>
        ) : (
          <Text size="sm" c="dimmed" mb="xs" id={reasonId} data-testid="read-only-reason">
            <IconEye size={14} aria-hidden style={{ verticalAlign: 'middle', marginRight: 4 }} />
            {NOT_ALLOWED}
          </Text>
        ))}
      {children}
    </fieldset>
  )
}
