/** The metrics listener's answers, spelled here only. */
export const metricsErrors = {
  NOT_FOUND: { code: 'NOT_FOUND', message: 'Only GET /metrics is served here' },
} as const
