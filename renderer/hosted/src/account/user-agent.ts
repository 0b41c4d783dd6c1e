/** The device names of the Sessions and Activity pages: one rule with the server's sign-in notices. */
export { deviceOf } from '../../../../server/core/user-agent'
