import { app, dialog } from 'electron'
import { startDesktop } from './app.js'

// Anything start-up did not foresee still ends in a dialog and a quit, never a hidden process.
startDesktop().catch((error: unknown) => {
  console.error('Gatehouse could not start:', error)
  dialog.showErrorBox(
    'Gatehouse could not start',
    `${(error as Error)?.message ?? String(error)}\n\nStart Gatehouse again; if it keeps failing, start it from a terminal to see its log.`,
  )
  app.exit(1)
})
