import type { HandlerGroup } from '../service.js'
import { notAvailable } from '../service.js'

type OrgOps =
  | 'orgs.list'
  | 'orgs.get'
  | 'orgs.create'
  | 'orgs.updateMemberRole'
  | 'orgs.removeMember'
  | 'orgs.createTeam'
  | 'orgs.renameTeam'
  | 'orgs.removeTeam'
  | 'orgs.invite'
  | 'orgs.cancelInvitation'

const unavailable = () => {
  throw notAvailable('Organizations')
}

export const organizationHandlers: HandlerGroup<OrgOps> = () => ({
  'orgs.list': unavailable,
  'orgs.get': unavailable,
  'orgs.create': unavailable,
  'orgs.updateMemberRole': unavailable,
  'orgs.removeMember': unavailable,
  'orgs.createTeam': unavailable,
  'orgs.renameTeam': unavailable,
  'orgs.removeTeam': unavailable,
  'orgs.invite': unavailable,
  'orgs.cancelInvitation': unavailable,
})
