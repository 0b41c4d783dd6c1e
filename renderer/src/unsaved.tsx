import { Button, Group, Modal, Stack, Text } from '@mantine/core'
import { useEffect } from 'react'

/**
 * Views with unsaved edits (Settings drafts, the Single sign-on lifetimes): the App shell asks
 * before leaving such a view for another (LeaveDialog), instead of dropping the edits silently.
 */
const dirty = new Set<string>()

/** Marks `key` as holding unsaved edits while `isDirty` (and the calling component is mounted). */
export function useUnsaved(key: string, isDirty: boolean): void {
  useEffect(() => {
    if (isDirty) dirty.add(key)
    else dirty.delete(key)
    return () => {
      dirty.delete(key)
    }
  }, [key, isDirty])
}

export const hasUnsaved = (): boolean => dirty.size > 0

/** Asks whether to leave a view whose edits are not saved; `target` is the address asked for. */
export function LeaveDialog({ target, onStay }: { target: string | null; onStay: () => void }) {
  return (
    <Modal opened={target !== null} onClose={onStay} title="Leave without saving?" centered data-testid="leave-dialog">
      <Stack>
        <Text size="sm">This view has changes that are not saved. Leaving throws them away.</Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={onStay} data-autofocus data-testid="leave-stay">
            Stay and keep editing
          </Button>
          <Button
            color="red"
            data-testid="leave-discard"
            onClick={() => {
              dirty.clear()
              if (target !== null) window.location.hash = target
              onStay()
            }}
          >
            Leave and discard
          </Button>
        </Group>
      </Stack>
    </Modal>
  )
}
