/** The readiness check's answers, spelled here only. */
export const healthErrors = {
  MIGRATIONS_PENDING: { code: 'MIGRATIONS_PENDING', message: 'Database migrations are not all applied' },
  DATABASE_NOT_WRITABLE: { code: 'DATABASE_NOT_WRITABLE', message: 'The database cannot be written' },
} as const
