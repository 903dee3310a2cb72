package com.example.orders;

import dev.locksmith.pool.ChannelAccount;

/**
 * The outside service an outbound call goes to, on behalf of one channel account (a sender
 * address, an API key, a wallet: anything of which each may serve one call at a time).
 */
public interface ChannelGateway {

    /**
     * Makes the call. Runs with the account leased and no transaction open, so no connection is
     * held while the other side answers.
     *
     * @param account the leased channel account to call as
     * @param message what to send
     * @return the other side's reference for the call
     * @throws Exception any failure: the account is released and the request answered 502
     */
    String call(ChannelAccount account, String message) throws Exception;
}
