export declare const scriptCallRestriction: { selector: string; message: string };
