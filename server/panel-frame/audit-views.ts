import type { AuditRow } from '../core/audit.js'
import type { AuthContext } from '../core/context.js'
import { findPeopleByIds } from '../core/user-store.js'
import type { AuditEventView, PersonView } from './shapes.js'

/** Audit rows as the panel views show them (the audit log, the overview, a user's page). */
export const toAuditView = (row: AuditRow): AuditEventView => ({ ...row, createdAt: row.createdAt.getTime() })

/**
 * The people the events name (actor and target), by id: the panel shows a name and an email
 * instead of an id. A deleted user is simply absent (the row keeps its id).
 */
export async function peopleOf(ctx: AuthContext, rows: AuditRow[]): Promise<Record<string, PersonView>> {
  const ids = [...new Set(rows.flatMap((r) => [r.actorUserId, r.targetUserId]).filter((id): id is string => Boolean(id)))]
  const people: Record<string, PersonView> = {}
  for (const person of await findPeopleByIds(ctx, ids)) people[person.id] = person
  return people
}
