/** `gatehouse jwt --help` (apart from cli.ts, so the CLI's start-up loads only this: commands.ts). */
export const JWT_USAGE = `Usage: gatehouse jwt rotate [--data-dir <dir>]   a new signing key signs from now on; the old one stays in the JWKS for the grace period
       gatehouse jwt keys [--data-dir <dir>]     the signing keys and their state

Works on the data directory whether or not a server runs on it (a running server sees the change
within a second). The auth secret is the data directory's, or GATEHOUSE_SECRET.
`
