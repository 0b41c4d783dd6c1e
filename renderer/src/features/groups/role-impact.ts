import { call } from '../../api'
import type { FieldImpact } from '../panel-feature'

/**
 * The Settings fields that define roles (`admin.roles`, `organization.roles`) ask before a save that
 * removes or renames a role what names it (`groups.roleImpact`, issue 50 §5), and the admin keeps the
 * role or removes it anyway.
 */
export function roleImpact(key: 'roles' | 'organizationRoles'): FieldImpact {
  return {
    ask: (_before, after) =>
      call('groups.roleImpact', {
        [key]: after && typeof after === 'object' && !Array.isArray(after) ? (after as Record<string, unknown>) : {},
      }),
    title: 'Remove a role that rules name?',
    message:
      'Nobody could be given these roles any more, so what names them would hold only for those who have them now. Change those first, or remove anyway.',
    keep: 'Keep the role',
    proceed: 'Remove anyway',
  }
}
