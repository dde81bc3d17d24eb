// Vite's `?raw` imports (test fixtures such as PEM files).
declare module "*?raw" {
  const text: string;
  export default text;
}
