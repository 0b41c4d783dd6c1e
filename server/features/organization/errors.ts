import { APIError, type ErrorStatus } from '../../core/errors.js'

/**
 * The organization error catalogue, the only place its messages are spelled: the spec's wording
 * where it gives one, otherwise better-auth's (ORGANIZATION_ERROR_CODES of 1.7); the code is the
 * better-auth catalogue key.
 */
export const ORG_ERRORS = {
  YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION: 'You are not allowed to create a new organization',
  YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS: 'You have reached the maximum number of organizations',
  ORGANIZATION_ALREADY_EXISTS: 'Organization already exists',
  ORGANIZATION_SLUG_ALREADY_TAKEN: 'Organization slug already taken',
  // Gatehouse's own (better-auth takes any slug): a slug is a group name beside the roles
  // (forward auth's Remote-Groups, the OIDC groups claim), so it is refused like a taken one (400).
  INVALID_ORGANIZATION_SLUG: 'Organization slug may contain only lower-case letters, digits and hyphens',
  ORGANIZATION_SLUG_IS_A_ROLE_NAME: 'Organization slug is the name of a role',
  // A slug the configuration names as a group (a forward-auth rule, a SAML app's allowed groups):
  // whoever created it would pass that rule, so only an administrator may.
  ORGANIZATION_SLUG_RESERVED: 'Organization slug is reserved by the server configuration',
  ORGANIZATION_NOT_FOUND: 'Organization not found',
  USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION: 'User is not a member of the organization',
  YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION: 'You are not a member of this organization',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION: 'You are not allowed to update this organization',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION: 'You are not allowed to delete this organization',
  NO_ACTIVE_ORGANIZATION: 'No active organization',
  ORGANIZATION_ID_IS_REQUIRED: 'Organization ID is required',
  USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION: 'User is already a member of this organization',
  MEMBER_NOT_FOUND: 'Member not found',
  ROLE_NOT_FOUND: 'Role not found',
  TEAM_NOT_FOUND: 'Team not found',
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER: 'You cannot leave the organization as the only owner',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER: 'You are not allowed to delete this member',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER: 'You are not allowed to update this member',
  YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION: 'You are not allowed to invite users to this organization',
  YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE: 'You are not allowed to invite a user with this role',
  USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION: 'User is already invited to this organization',
  INVITATION_NOT_FOUND: 'Invitation not found',
  YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION: 'You are not the recipient of the invitation',
  YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION: 'You are not allowed to cancel this invitation',
  INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION: 'Inviter is no longer a member of the organization',
  FAILED_TO_RETRIEVE_INVITATION: 'Failed to retrieve invitation',
  INVITATION_LIMIT_REACHED: 'Invitation limit reached',
  ORGANIZATION_MEMBERSHIP_LIMIT_REACHED: 'Organization membership limit reached',
  YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS: 'You have reached the maximum number of teams',
  UNABLE_TO_REMOVE_LAST_TEAM: 'Unable to remove last team',
  YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION: 'You are not allowed to create teams in this organization',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION: 'You are not allowed to delete teams in this organization',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM: 'You are not allowed to update this team',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM: 'You are not allowed to delete this team',
  TEAMS_ARE_NOT_ENABLED: 'Teams are not enabled',
  TEAM_MEMBER_LIMIT_REACHED: 'Team member limit reached',
  USER_IS_NOT_A_MEMBER_OF_THE_TEAM: 'User is not a member of the team',
  YOU_DO_NOT_HAVE_AN_ACTIVE_TEAM: 'You do not have an active team',
  YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER: 'You are not allowed to create a new member',
  YOU_ARE_NOT_ALLOWED_TO_REMOVE_A_TEAM_MEMBER: 'You are not allowed to remove a team member',
  YOU_ARE_NOT_ALLOWED_TO_ACCESS_THIS_ORGANIZATION: 'You are not allowed to access this organization as an owner',
  NOT_AUTHENTICATED: 'Not authenticated',
} as const

export type OrgErrorCode = keyof typeof ORG_ERRORS

/**
 * The input field each error concerns, where one does (the panel shows the message beside it):
 * the names are those of the create / invite / team forms (`slug`, `email`, `role`, `teamId`).
 */
export const ORG_ERROR_FIELDS: Partial<Record<OrgErrorCode, string>> = {
  ORGANIZATION_ALREADY_EXISTS: 'slug',
  ORGANIZATION_SLUG_ALREADY_TAKEN: 'slug',
  INVALID_ORGANIZATION_SLUG: 'slug',
  ORGANIZATION_SLUG_IS_A_ROLE_NAME: 'slug',
  ORGANIZATION_SLUG_RESERVED: 'slug',
  USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION: 'email',
  USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION: 'email',
  ROLE_NOT_FOUND: 'role',
  YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE: 'role',
  TEAM_NOT_FOUND: 'teamId',
  TEAMS_ARE_NOT_ENABLED: 'teamId',
  YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS: 'teamName',
}

/** Other wording the organization endpoints answer with. */
export const ORG_MESSAGES = {
  TEAM_REMOVED: 'Team removed successfully.',
  TEAM_MEMBER_REMOVED: 'Team member removed successfully.',
  NO_PERMISSIONS_PASSED: 'invalid permission check. no permission(s) were passed.',
} as const

/** An organization error, carrying the field the catalogue names for it. */
export const orgError = (status: ErrorStatus, code: OrgErrorCode): APIError =>
  new APIError(status, code, ORG_ERRORS[code], {}, ORG_ERROR_FIELDS[code])

/** ROLE_NOT_FOUND naming the roles that are not in the role table (better-auth 1.7's wording). */
export const roleNotFound = (unknown: readonly string[]): APIError =>
  new APIError(400, 'ROLE_NOT_FOUND', `${ORG_ERRORS.ROLE_NOT_FOUND}: ${unknown.join(', ')}`, {}, ORG_ERROR_FIELDS.ROLE_NOT_FOUND)

/** A core error (e.g. INVALID_EMAIL) pinned to the organization form field it came from. */
export function onField(error: unknown, field: string): unknown {
  if (!(error instanceof APIError) || error.field) return error
  return new APIError(error.status, error.code, error.message, error.headers, field)
}
