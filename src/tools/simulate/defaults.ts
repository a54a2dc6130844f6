// The simulation `npm run simulate` and `npm run train` use unless told otherwise.
export const DEFAULT_SIMULATION = {
  seed: 20250106,
  cards: 4000,
  days: 90,
  validationFromDay: 60,
  testFromDay: 72,
} as const;
