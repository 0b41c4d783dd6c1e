/** A refusal raised by the panel layer itself (the domain raises APIError). */
export class PanelError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues?: Array<{ path: string; message: string }>,
  ) {
    super(message)
    this.name = 'PanelError'
  }
}
