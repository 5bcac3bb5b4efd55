function Z = maxunpool(X, indx, outputSize, varargin)
%MAXUNPOOL  Z = zeros(outputSize); Z(indx) = X, as MATLAB's maxunpool.
%   Z = poolkit.maxunpool(X, indx, outputSize)
%   indx and outputSize as poolkit.maxpool returns them: 1-based linear indices (shaped like X, or a column)
%   and size(X) of the pooling input; or, with 'Indices','compact', the compact indx and the struct maxpool
%   gave as its third output. Where two entries of indx name one cell, the last in X's order wins.
%   With compact indices and windows that do not overlap, a -0 in X arrives in Z as +0 (the linear form keeps -0).
%   Name-value options ('DataFormat') are accepted for MATLAB's signature; the indices say where X goes.
[X, ~, host] = poolkit.internal.from_host(X, varargin);
if isstruct(outputSize)
  Z = poolkit.internal.call('maxunpool', {X, indx, outputSize});
else
  Z = poolkit.pkmex('maxunpool', X, indx, outputSize);
end
Z = poolkit.internal.to_host(Z, host);
end
