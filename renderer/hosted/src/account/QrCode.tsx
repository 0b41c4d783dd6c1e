import { Box } from '@mantine/core'
import { qrPath } from './qr'

/** The otpauth:// link drawn as a QR code, here in the page. */
export function QrCode({ text }: { text: string }) {
  const { d, size } = qrPath(text)
  return (
    <Box bg="white" p={8} style={{ width: 'fit-content', lineHeight: 0 }}>
      <svg
        role="img"
        aria-label="QR code of the authenticator app link (the link is also written below)"
        viewBox={`-2 -2 ${size + 4} ${size + 4}`}
        width={200}
        height={200}
        shapeRendering="crispEdges"
        data-testid="totp-qr"
      >
        <rect x={-2} y={-2} width={size + 4} height={size + 4} fill="#ffffff" />
        <path d={d} fill="#000000" data-testid="totp-qr-path" />
      </svg>
    </Box>
  )
}
