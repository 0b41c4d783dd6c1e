import { useState } from 'react'

/**
 * A field of a managed object (a SAML app, an organization...) as a view edits it (issue 50 §1):
 * the stored value until the admin types, then their draft and the value it was read at, which
 * the save sends as the field's base; the server refuses it (409 CONFLICT, naming who and when)
 * if another admin changed the field since. Data refreshed meanwhile never moves the base, so a
 * field this admin did not touch is never sent, and one they did is checked against what they saw.
 */
export function useFieldDraft<T>(stored: T): {
  value: T
  set: (value: T) => void
  /** The value the admin's edit started from (the stored value while there is no draft). */
  read: T
  editing: boolean
  reset: () => void
} {
  const [draft, setDraft] = useState<{ value: T; read: T } | null>(null)
  return {
    value: draft ? draft.value : stored,
    set: (value) => setDraft((d) => ({ value, read: d ? d.read : stored })),
    read: draft ? draft.read : stored,
    editing: draft !== null,
    reset: () => setDraft(null),
  }
}
