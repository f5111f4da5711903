/** The translation domain of every user-visible string (a leaf module: every room may import it). */
export const TRANSLATION_DOMAIN = 'notebook_bcc';
