import { ActionIcon, Code, CopyButton, Group, Modal, Stack, Text, Tooltip } from '@mantine/core'
import { IconCheck, IconCopy } from '@tabler/icons-react'
import type { ReactNode } from 'react'

/** A value with a button that copies it (says "Copied" once the clipboard took it). */
export function Copyable({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <Group gap="xs" wrap="nowrap">
      <Text size="sm" w={110}>
        {label}
      </Text>
      <Code style={{ flex: 1, wordBreak: 'break-all' }} data-testid={testId}>
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Tooltip label={copied ? 'Copied' : `Copy ${label.toLowerCase()}`} withArrow>
            <ActionIcon
              variant="light"
              color={copied ? 'teal' : 'gray'}
              onClick={copy}
              aria-label={`Copy ${label.toLowerCase()}`}
              data-testid={`${testId}-copy`}
            >
              {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  )
}

/**
 * A dialog showing something this once (a client secret, a registration token): Escape and a click
 * outside do not close it (what it shows would be lost); only its own Done button does.
 */
export function ShownOnceModal({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Modal
      opened
      onClose={() => undefined}
      title={title}
      size="lg"
      centered
      closeOnEscape={false}
      closeOnClickOutside={false}
      withCloseButton={false}
    >
      <Stack>{children}</Stack>
    </Modal>
  )
}
