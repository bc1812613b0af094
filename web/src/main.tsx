import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import { Anchor, createTheme, Modal, Notification, defaultVariantColorsResolver, MantineProvider, parseThemeColor, type CSSVariablesResolver } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { setNonce } from 'get-nonce';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { ApiError } from './api/errors';
import { router } from './router';
import { restoreSession, whenSignedOut } from './session/session';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal will not change by asking again; a network error or a 5xx may.
      retry: (count, error) => count < 2 && !(error instanceof ApiError && error.status < 500),
      staleTime: 5_000,
      refetchOnWindowFocus: true,
    },
  },
});
// Nothing fetched for one session is shown to the next.
whenSignedOut(() => queryClient.clear());

/**
 * Mantine's defaults, darkened where axe measures less than WCAG AA contrast (4.5:1): the primary shade,
 * dimmed text, and links inside text underlined.
 */
const theme = createTheme({
  primaryColor: 'blue',
  // Transitions off for people (and browsers) that ask for reduced motion.
  respectReducedMotion: true,
  primaryShade: { light: 8, dark: 5 },
  defaultRadius: 'md',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  components: {
    Anchor: Anchor.extend({ defaultProps: { underline: 'always' } }),
    // Mantine's close buttons of a dialog and a notification have no name of their own.
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close dialog' } } }),
    Notification: Notification.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close notification' } } }),
  },
  // Light buttons and badges, and subtle buttons (whose hover is the light background): their text at the
  // darkest shade, a quarter darker again.
  variantColorResolver: (input) => {
    const colors = defaultVariantColorsResolver(input);
    if (input.variant !== 'light' && input.variant !== 'subtle') return colors;
    const parsed = parseThemeColor({ color: input.color ?? input.theme.primaryColor, theme: input.theme });
    return parsed.isThemeColor ? { ...colors, color: `color-mix(in srgb, var(--mantine-color-${parsed.color}-9), black 25%)` } : colors;
  },
});
const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    // A field's error text and border (red 6 on white measures 3.3:1).
    '--mantine-color-error': 'var(--mantine-color-red-9)',
    '--mantine-primary-color-light-color': 'color-mix(in srgb, var(--mantine-color-blue-9), black 25%)',
  },
  dark: { '--mantine-color-dimmed': 'var(--mantine-color-dark-1)' },
});

/** The page's CSP nonce (api/plugins/console.ts): Mantine's <style> elements carry it. */
const nonce = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce ?? '';
// A dialog locks the page's scroll with a <style> of its own (react-remove-scroll), which reads its nonce here.
setNonce(nonce);

void restoreSession();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="auto" cssVariablesResolver={cssVariablesResolver} getStyleNonce={() => nonce}>
      <Notifications position="top-right" />
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
