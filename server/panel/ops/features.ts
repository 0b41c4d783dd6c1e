/**
 * Which panel areas have their domain functions in this build. The panel grows with the server:
 * an area's operations answer NOT_AVAILABLE until its domain module exists.
 */
export function features() {
  return { admin: true, organizations: true, providers: true, email: true }
}
