import { Alert, Button, EmptyState, Group, Loader, Modal, Stack, Text, Title } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { IconAlertTriangle, IconClockHour4 } from '@tabler/icons-react'
import type { ReactNode } from 'react'
import type { PanelCallError } from '../api'

export function PageHeader({ title, description, actions }: { title: string; description?: string; actions?: ReactNode }) {
  return (
    <Group justify="space-between" align="flex-start" mb="lg" wrap="nowrap">
      <div>
        <Title order={2}>{title}</Title>
        {description && (
          <Text c="dimmed" size="sm" mt={4}>
            {description}
          </Text>
        )}
      </div>
      {actions && <Group gap="xs">{actions}</Group>}
    </Group>
  )
}

/** An operation failed. NOT_AVAILABLE means the feature's server side has not landed in this build. */
export function ErrorNotice({ error, onRetry }: { error: PanelCallError | null; onRetry?: () => void }) {
  if (!error) return null
  if (error.code === 'NOT_AVAILABLE') {
    return (
      <EmptyState
        icon={<IconClockHour4 />}
        title="Not available in this build yet"
        description={`${error.message}. Update Gatehouse to use this view.`}
        data-testid="not-available"
      />
    )
  }
  return (
    <Alert color="red" icon={<IconAlertTriangle />} title={error.code} data-testid="error-notice">
      <Stack gap="xs">
        <Text size="sm">{error.message}</Text>
        {onRetry && (
          <Group>
            <Button size="xs" variant="light" color="red" onClick={onRetry}>
              Try again
            </Button>
          </Group>
        )}
      </Stack>
    </Alert>
  )
}

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <Group justify="center" p="xl" aria-label={label}>
      <Loader size="sm" />
    </Group>
  )
}

/** A destructive action behind a confirmation dialog. */
export function ConfirmButton({
  label,
  title,
  message,
  confirmLabel,
  onConfirm,
  loading,
  color = 'red',
  variant = 'light',
  size = 'xs',
  leftSection,
  testId,
  disabled,
  ...refused
}: {
  label: ReactNode
  title: string
  message: ReactNode
  confirmLabel: string
  onConfirm: () => unknown
  loading?: boolean
  color?: string
  variant?: 'light' | 'filled' | 'subtle' | 'outline' | 'default'
  size?: 'xs' | 'sm' | 'md'
  leftSection?: ReactNode
  testId?: string
  disabled?: boolean
  /** Not allowed to the signed-in admin: access.tsx's Allowed sets these (focusable, with its reason). */
  'aria-disabled'?: boolean
  'aria-describedby'?: string
  'data-disabled'?: boolean
}) {
  const [opened, { open, close }] = useDisclosure(false)
  return (
    <>
      <Button
        size={size}
        color={color}
        variant={variant}
        onClick={open}
        leftSection={leftSection}
        data-testid={testId}
        disabled={disabled}
        {...refused}
      >
        {label}
      </Button>
      <Modal opened={opened} onClose={close} title={title} centered>
        <Stack>
          <Text size="sm">{message}</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button
              // A darker shade on the filled button: white on red.6 is below WCAG AA's 4.5:1.
              color={color === 'red' ? 'red.8' : color}
              loading={loading}
              data-testid={testId ? `${testId}-confirm` : undefined}
              onClick={async () => {
                await onConfirm()
                close()
              }}
            >
              {confirmLabel}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  )
}

/**
 * Puts a failed operation's message beside the form field the server named (PanelCallError.field,
 * or a validation issue's path); a failure that concerns no field of this form is a notification.
 */
export function showFieldErrors(
  e: PanelCallError,
  setFieldError: (field: string, message: string) => void,
  fields: readonly string[],
  title: string,
): void {
  let shown = false
  for (const field of fields) {
    const message = e.messageFor(field)
    if (message) {
      setFieldError(field, message)
      shown = true
    }
  }
  if (!shown) notifications.show({ color: 'red', title, message: e.message })
}
