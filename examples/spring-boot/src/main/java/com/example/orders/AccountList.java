package com.example.orders;

import static dev.locksmith.codegen.Tables.ACCOUNTS;

import dev.locksmith.Locksmith;
import dev.locksmith.accounts.Account;
import java.util.List;
import org.jooq.DSLContext;
import org.springframework.stereotype.Component;

/**
 * Reads locksmith's {@code accounts} table directly, with the jOOQ classes locksmith generates
 * ({@code dev.locksmith.codegen}): {@code Accounts} has no listing, and a service's own queries
 * on these tables are typed the same way. The {@code Locksmith} environment's context renders the
 * tables in {@code locksmith.schema.name}.
 */
@Component
class AccountList {

    /** More than a demo needs; a real listing would page. */
    static final int LIMIT = 100;

    private final DSLContext dsl;

    AccountList(Locksmith locksmith) {
        this.dsl = locksmith.dsl();
    }

    /** {@return the first {@value #LIMIT} accounts by id} */
    List<Account> first() {
        return dsl.selectFrom(ACCOUNTS)
                .orderBy(ACCOUNTS.ID)
                .limit(LIMIT)
                .fetch(r -> new Account(r.getId(), r.getBalance(), r.getVersion(), r.getUpdatedAt()));
    }

    /** {@return whether there is any account} */
    boolean any() {
        return dsl.fetchExists(ACCOUNTS);
    }
}
