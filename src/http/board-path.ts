/** Where Bull Board is served (http/fleet-board.ts), apart from it: the board's packages load only when it is enabled. */
export const BOARD_PATH = '/admin/queues';
