/** The import feature's panel refusals, spelled here only (the CLI's usage lines are its own). */
export const importErrors = {
  UPLOAD_NOT_FOUND: { code: 'UPLOAD_NOT_FOUND', message: 'The uploaded file is gone: choose it again' },
  UPLOAD_OUT_OF_ORDER: { code: 'UPLOAD_OUT_OF_ORDER', message: 'A part of the file arrived out of order: choose it again' },
  UPLOAD_TOO_LARGE: { code: 'UPLOAD_TOO_LARGE', message: 'The file is larger than the panel takes (1 GB): use gatehouse import users' },
  UNKNOWN_FORMAT: { code: 'UNKNOWN_FORMAT', message: 'Cannot tell the format of the file: name it .json or .csv, or choose the format' },
  IMPORT_RUNNING: { code: 'IMPORT_RUNNING', message: 'An import is already running' },
  SOURCE_UNUSABLE: { code: 'SOURCE_UNUSABLE', message: 'The better-auth database cannot be read' },
} as const
