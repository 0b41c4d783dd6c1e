import type { PublicConfig } from './api'

/** What App hands every hosted page (its own module, so pages do not import App, which imports them). */
export interface PageProps {
  config: PublicConfig
}
