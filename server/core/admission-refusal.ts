/**
 * The faces and the admission rule's reasons (core/admission.ts), apart so that the Feature type
 * (server/feature.ts, its `faceRefusal` hook) names them without importing the rule, which asks
 * the features.
 */
export type Face = 'forward-auth' | 'saml' | 'ldap' | 'oidc'

export type AdmissionRefusal =
  | 'BANNED_USER'
  | 'API_KEY_SESSION'
  | 'IMPERSONATION'
  | 'ANONYMOUS_USER'
  | 'TWO_FACTOR_ENROLLMENT_REQUIRED'
  | 'EMAIL_NOT_VERIFIED'
