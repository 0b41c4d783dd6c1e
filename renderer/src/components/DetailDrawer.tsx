import { Drawer } from '@mantine/core'
import type { ReactNode } from 'react'
import type { PanelCallError } from '../api'
import { ErrorNotice, Loading } from './common'

/**
 * The right-hand drawer a list row opens (a user, an organization): its title, the load's error,
 * a spinner until the record is there, then the record's parts (`children`, rendered only once loaded).
 */
export function DetailDrawer({
  opened,
  onClose,
  title,
  error,
  loaded,
  children,
}: {
  opened: boolean
  onClose: () => void
  title: string
  error: PanelCallError | null
  loaded: boolean
  children: () => ReactNode
}) {
  return (
    <Drawer opened={opened} onClose={onClose} position="right" size="xl" title={title}>
      <ErrorNotice error={error} />
      {loaded ? children() : !error && <Loading />}
    </Drawer>
  )
}
