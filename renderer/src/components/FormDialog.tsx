import { Button, Group, Modal, Stack } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import type { FormEvent, ReactNode } from 'react'
import type { OpName } from '../../../server/panel/contract'
import { Allowed } from '../access'

/** A form's Cancel and submit buttons, at its foot. */
export function FormActions({
  onCancel,
  saving,
  saveTestId,
  saveLabel = 'Save',
}: {
  onCancel: () => void
  saving: boolean
  saveTestId?: string
  saveLabel?: string
}) {
  return (
    <Group justify="flex-end">
      <Button variant="default" onClick={onCancel}>
        Cancel
      </Button>
      <Button type="submit" loading={saving} data-testid={saveTestId}>
        {saveLabel}
      </Button>
    </Group>
  )
}

/**
 * A small button (shown to the roles that may run `op`) opening a dialog with a form: the user
 * drawer's Edit, the organization drawer's Rename. `onOpen` resets the form to the record;
 * `onSubmit(close)` is the form's submit handler, which closes the dialog once saved.
 */
export function FormDialogButton({
  op,
  label,
  icon,
  testId,
  title,
  onOpen,
  onSubmit,
  saving,
  saveTestId,
  children,
}: {
  op: OpName
  label: string
  icon: ReactNode
  testId: string
  title: string
  onOpen: () => void
  onSubmit: (close: () => void) => (event?: FormEvent<HTMLFormElement>) => void
  saving: boolean
  saveTestId: string
  children: ReactNode
}) {
  const [opened, { open, close }] = useDisclosure(false)
  return (
    <>
      <Allowed op={op}>
        <Button
          size="xs"
          variant="light"
          leftSection={icon}
          onClick={() => {
            onOpen()
            open()
          }}
          data-testid={testId}
        >
          {label}
        </Button>
      </Allowed>
      <Modal opened={opened} onClose={close} title={title} centered>
        <form onSubmit={onSubmit(close)}>
          <Stack>
            {children}
            <FormActions onCancel={close} saving={saving} saveTestId={saveTestId} />
          </Stack>
        </form>
      </Modal>
    </>
  )
}
