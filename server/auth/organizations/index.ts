/**
 * Organizations with members, teams and invitations (SPEC §3–§9). Every rule lives in these
 * modules; the HTTP routes and the control panel call the same functions with an OrgActor.
 */
export * from './invitations.js'
export * from './members.js'
export * from './orgs.js'
export * from './shared.js'
export * from './teams.js'
