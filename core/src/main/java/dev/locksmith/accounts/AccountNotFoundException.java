package dev.locksmith.accounts;

import dev.locksmith.exception.LocksmithException;

/** No account has the given id. */
public final class AccountNotFoundException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** The id that was looked for. */
    private final long accountId;

    AccountNotFoundException(long accountId) {
        super("no account with id " + accountId);
        this.accountId = accountId;
    }

    /** {@return the id that was looked for} */
    public long accountId() {
        return accountId;
    }
}
