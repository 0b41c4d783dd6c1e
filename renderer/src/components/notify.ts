import { notifications } from '@mantine/notifications'
import type { PanelCallError } from '../api'

/** The toasts of the Users and Organizations views (and their drawers): a refusal with the server's message, a success in one line. */
export function failed(title: string) {
  return (e: PanelCallError) => notifications.show({ color: 'red', title, message: e.message })
}
export const done = (message: string) => notifications.show({ color: 'teal', title: 'Done', message })
