import { type ComponentType, createContext, type LazyExoticComponent } from 'react'

/**
 * What a renderer feature folder adds to the control panel, declared in the folder's index.ts
 * (as server/features/<name>/index.ts declares the server side): its views in the navigation and
 * its fields in the Settings sections. renderer/src/features/index.ts lists every folder once; the
 * navigation (App.tsx) and the Settings sections (settings/settings-fields.ts) are built from that
 * list, so a capability is one folder and one line there.
 */

/** The kinds of control a Settings field can be. */
export type FieldKind =
  | 'switch'
  | 'inverted'
  | 'number'
  /** A number that may be left empty (the key is removed, its default applies). */
  | 'optional-number'
  | 'seconds'
  | 'optional-seconds'
  | 'text'
  | 'optional-text'
  | 'tags'
  | 'select'
  | 'json'
  | 'tristate'
  | 'origins'

/** One configuration key (better-auth's option name) with a human label and one line of help. */
export interface FieldSpec {
  path: string
  label: string
  /** One line of help under the label. */
  help: string
  kind: FieldKind
  options?: Array<{ value: string; label: string }>
  /** select: the key may be left unset (its default applies); this option's label says what that means. */
  unsetLabel?: string
  min?: number
  max?: number
  /** Asked before a save that changes this field: what the change takes away (issue 50 §5). */
  impact?: FieldImpact
}

/**
 * What a change of one Settings field takes away, asked of the server before the save is sent: a
 * non-empty answer (the rules that name what the change removes) is listed, and the admin keeps the
 * saved value or saves anyway. An empty answer (or none, when the question fails) saves at once.
 */
export interface FieldImpact {
  ask: (before: unknown, after: unknown) => Promise<Array<{ where: string; name: string; problem: string }>>
  /** The dialog's title. */
  title: string
  /** One sentence above the list. */
  message: string
  /** The answer that puts the saved value back and saves nothing. */
  keep: string
  /** The answer that saves the change. */
  proceed: string
}

/** The Settings sections, in the order the Settings view lists them (settings/settings-fields.ts titles them). */
export type SectionId =
  | 'application'
  | 'sign-in'
  | 'multi-factor'
  | 'sessions'
  | 'rate-limits'
  | 'users'
  | 'organizations'
  | 'admin'
  | 'mail'

/** A feature's fields in one Settings section. */
export interface SettingsContribution {
  section: SectionId
  fields: FieldSpec[]
  /** 'last': after every other feature's fields in the section (default: in the order of the feature list). */
  placement?: 'last'
}

/** A view in the navigation: its address (#/<name>), its label and icon, and its page, loaded when first opened. */
export interface PanelView {
  name: string
  label: string
  icon: ComponentType<{ size?: number }>
  Page: LazyExoticComponent<ComponentType>
  /** Old addresses that still open this view. */
  aliases?: string[]
}

export interface PanelFeature {
  /** The feature's folder name, the same as its server folder (server/features/<name>) where it has one. */
  name: string
  views?: PanelView[]
  settings?: SettingsContribution[]
  /**
   * Configuration keys this feature edits in its own view, or that are read at start-up only:
   * key → where they are set. The Settings view offers no field for them.
   */
  editedElsewhere?: Record<string, string>
}

export const definePanelFeature = (feature: PanelFeature): PanelFeature => feature

/**
 * The feature list, provided by the App shell to the views that aggregate over it (Settings): a
 * view cannot import features/index.ts, which loads the views.
 */
export const PanelFeatures = createContext<readonly PanelFeature[]>([])
