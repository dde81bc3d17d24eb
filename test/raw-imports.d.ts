// Vite's `?raw` imports: a file's text (test fixtures such as PEM keys).
declare module "*?raw" {
  const text: string;
  export default text;
}
